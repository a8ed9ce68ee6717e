"""One file over HTTP with a progress bar, continued with a Range request after a break, not restarted."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
from tqdm import tqdm

from voice.errors import ModelError

ATTEMPTS = 3  # tries in a row, each continuing where the last broke off; a try that got nothing stops them


def partial_path(target: Path) -> Path:
    """Where the bytes of ``target`` collect until it is whole."""
    return target.with_name(target.name + ".part")


def download(client: httpx.Client, url: str, target: Path, *, label: str | None = None) -> None:
    """Fetch ``url`` into ``target``, continuing a ``target.part`` left by an earlier, broken-off download.

    The connection breaking mid-file is retried at once from where it stopped; if the retries run out or
    the server is unreachable, the partial file stays for the next run and the error is a ModelError.
    """
    partial = partial_path(target)
    for attempt in range(1, ATTEMPTS + 1):
        had = partial.stat().st_size if partial.exists() else 0
        try:
            _fetch(client, url, partial, label or target.name)
            break
        except httpx.TransportError as exc:
            got = partial.stat().st_size if partial.exists() else 0
            if attempt == ATTEMPTS or got <= had:
                raise ModelError(
                    f"download of {url} stopped after {got / 1e6:.1f} MB ({_reason(exc)}): "
                    "run the same command again to continue"
                ) from exc
    partial.replace(target)


def _fetch(client: httpx.Client, url: str, partial: Path, label: str) -> None:
    have = partial.stat().st_size if partial.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code == 416 and have:  # already whole: the earlier run stopped before renaming it
            return
        if response.status_code not in (200, 206):
            raise ModelError(f"cannot fetch {url}: HTTP {response.status_code} {response.reason_phrase}")
        resumed = response.status_code == 206 and _range_start(response) == have
        start = have if resumed else 0
        length = response.headers.get("Content-Length")
        total = start + int(length) if length and length.isdigit() else None
        with (
            partial.open("ab" if resumed else "wb") as file,
            tqdm(
                desc=label,
                total=total,
                initial=start,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=sys.stderr,
                disable=None,  # no bar when stderr is not a terminal
                leave=False,
            ) as bar,
        ):
            for block in response.iter_bytes():  # as they come: a break keeps every byte received
                file.write(block)
                bar.update(len(block))


def _range_start(response: httpx.Response) -> int | None:
    """Where the 206 body starts, from ``Content-Range: bytes START-END/TOTAL``."""
    unit, _, span = response.headers.get("Content-Range", "").partition(" ")
    start = span.partition("-")[0]
    return int(start) if unit == "bytes" and start.isdigit() else None


def _reason(exc: httpx.TransportError) -> str:
    return str(exc) or type(exc).__name__
