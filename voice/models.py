"""Where the bundled models live: files inside registry packages, found without importing them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from voice.errors import ModelError


def bundled_file(package: str, relative: str | Path, missing: str) -> Path:
    """``relative`` inside installed ``package``; ModelError with ``missing`` (what to do) if absent."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0]) / relative if locations else None
    if path is None or not path.exists():
        raise ModelError(missing)
    return path
