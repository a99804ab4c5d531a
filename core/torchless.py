"""spaCy without PyTorch: thinc (spaCy's network library) imports PyTorch when it is installed,
though the small English model runs on numpy alone. Imported by thinc, PyTorch costs each process
that loads spaCy (the task worker, the sleep cycle's child, a web worker answering a chat) seconds
and some 180 MB for nothing (docs/decisions/0003-spacy-without-torch.md).

`install()` puts a finder first on `sys.meta_path` that refuses `torch` only to the import made
by thinc's compatibility module; thinc then records that PyTorch is absent. Every other import of
torch, in any thread (the `torch` embedding backend, building the ONNX model), goes through as
usual, and a process that imported torch before spaCy keeps thinc's usual behaviour."""

from __future__ import annotations

import sys
from types import FrameType

_FRAMES_SEARCHED = 12  # importlib's own frames sit between thinc's import statement and the finder


class _NoTorchForThinc:
    def find_spec(self, name, path=None, target=None):
        if name != "torch" and not name.startswith("torch."):
            return None
        frame: FrameType | None = sys._getframe(1)
        for _ in range(_FRAMES_SEARCHED):
            if frame is None:
                break
            if frame.f_globals.get("__name__") == "thinc.compat":
                raise ImportError("spaCy runs without PyTorch here (core.torchless)")
            frame = frame.f_back
        return None

    # importlib calls these on meta path finders it keeps (none are needed)
    def invalidate_caches(self):
        pass


def install() -> None:
    if not any(isinstance(finder, _NoTorchForThinc) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoTorchForThinc())
