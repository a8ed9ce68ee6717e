"""The whisper model or piper voice a user asked for, by models.txt name, whisper size name or path."""

from __future__ import annotations

from pathlib import Path

from voice.errors import ModelError
from voice.models.catalog import Catalog, ModelEntry, load_catalog
from voice.models.store import models_dir, present
from voice.models.verify import checked_folder


def asr_model(choice: str | None, catalog: Catalog | None = None, store: Path | None = None) -> str | None:
    """What WhisperSettings.model takes for ``choice``; None keeps the bundled tiny.en.

    A models.txt name ("whisper-base") is its checked folder; a size name ("base") is the pulled
    ``whisper-SIZE`` when present, else passed on to faster-whisper's local cache; anything else is a path.
    """
    if choice is None:
        return None
    catalog = catalog or load_catalog()
    store = store or models_dir()
    entry = catalog.find(choice)
    if entry is not None:
        return str(checked_folder(_role(entry, "asr"), store))
    path = Path(choice).expanduser()
    if path.exists():
        return str(path)
    sized = catalog.find(f"whisper-{choice}")
    if sized is not None and present(sized, store) is not None:
        return str(checked_folder(_role(sized, "asr"), store))
    return choice


def tts_voice(choice: str | None, catalog: Catalog | None = None, store: Path | None = None) -> Path | None:
    """What PiperSettings.model takes for ``choice``; None keeps the bundled en_US-joe-medium.

    A models.txt name ("piper-en_GB-alba-medium") is its checked ``.onnx``; anything else is a path.
    """
    if choice is None:
        return None
    catalog = catalog or load_catalog()
    entry = catalog.find(choice)
    if entry is None:
        return Path(choice).expanduser()
    return checked_folder(_role(entry, "tts"), store or models_dir()) / entry.files[0]


def _role(entry: ModelEntry, role: str) -> ModelEntry:
    if entry.role != role:
        raise ModelError(f"{entry.name} is a model for {entry.role}, not {role}")
    return entry
