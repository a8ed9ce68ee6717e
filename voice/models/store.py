"""Where each model's files are: installed ones in site-packages, pulled ones in the user's data directory."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import platformdirs

from voice.models.catalog import Installed, ModelEntry


def models_dir() -> Path:
    """Where `voice models pull` puts models: ``~/.local/share/voice/models`` on Linux."""
    return Path(platformdirs.user_data_dir("voice")) / "models"


def folder(entry: ModelEntry, store: Path) -> Path | None:
    """The folder holding (or to hold) ``entry``'s files; None for an installed model whose package is not."""
    if isinstance(entry.source, Installed):
        return _installed_folder(entry.source)
    return store / entry.name


def partial_folder(entry: ModelEntry, store: Path) -> Path:
    """Where a pull of ``entry`` collects its files until they are whole and checked."""
    return store / f"{entry.name}.partial"


def present(entry: ModelEntry, store: Path) -> Path | None:
    """The folder of ``entry`` if every one of its files is there, else None."""
    where = folder(entry, store)
    if where is None or not all((where / name).is_file() for name in entry.files):
        return None
    return where


def size_of(entry: ModelEntry, where: Path) -> int:
    """Bytes taken by ``entry``'s files in ``where``."""
    return sum((where / name).stat().st_size for name in entry.files)


def sha256_of(path: Path) -> str:
    """The file's sha256 as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _installed_folder(source: Installed) -> Path | None:
    package, _, relative = source.folder.partition("/")
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) / relative if locations else None
