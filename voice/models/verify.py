"""Models checked against models.txt: every present one re-hashed, or one made sure of before it loads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from voice.errors import ModelError
from voice.models.catalog import Catalog, Installed, ModelEntry, Upstream
from voice.models.store import present, sha256_of


@dataclass(frozen=True)
class Check:
    """What re-hashing one present model found: ``matches`` None when models.txt records no sha256."""

    entry: ModelEntry
    where: Path
    sha256: str

    @property
    def matches(self) -> bool | None:
        return None if self.entry.sha256 is None else self.sha256 == self.entry.sha256


def verify_present(catalog: Catalog, store: Path) -> list[Check]:
    """Every model of ``catalog`` that is present (installed or pulled), its weights re-hashed."""
    checks = []
    for entry in catalog.entries:
        where = present(entry, store)
        if where is not None:
            checks.append(Check(entry, where, sha256_of(where / entry.files[0])))
    return checks


def how_to_get(entry: ModelEntry) -> str:
    """What a user does to put ``entry`` in place, as the end of a sentence."""
    if isinstance(entry.source, Installed):
        return f"run `pip install {entry.source.distribution}`"
    if entry.sha256 is None:
        source = entry.source
        where = source.url if isinstance(source, Upstream) else " ".join(source.requirements)
        return f"download it by hand from {where} and give its path (models.txt has no sha256 to pull it)"
    return f"run `voice models pull {entry.name}`"


def checked_folder(entry: ModelEntry, store: Path) -> Path:
    """The folder of ``entry`` once sure it is whole; else a one-line ModelError saying how to fix it.

    Pulled models are re-hashed (a fraction of a second for whisper base); installed ones were checked by pip.
    """
    where = present(entry, store)
    if where is None:
        raise ModelError(f"{entry.role} model {entry.name} is not present: {how_to_get(entry)}")
    if entry.pulled and entry.sha256 is not None and sha256_of(where / entry.files[0]) != entry.sha256:
        raise ModelError(
            f"{entry.role} model {entry.name} is corrupt (its sha256 differs from models.txt): "
            f"{how_to_get(entry)} again"
        )
    return where
