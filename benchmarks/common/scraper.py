"""A stand-in for Prometheus in benchmarks: fetches a /metrics URL at a fixed interval on a thread."""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

import httpx


class Scraper:
    """Fetches ``url`` every ``interval_s`` on a thread, as Prometheus would; keeps each scrape's time."""

    def __init__(self, url: str, interval_s: float) -> None:
        self.url = url
        self.interval_s = interval_s
        self.seconds: list[float] = []
        self.bytes = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with httpx.Client(timeout=10, trust_env=False) as client:
            while not self._stop.wait(self.interval_s):
                began = time.perf_counter()
                try:
                    response = client.get(self.url)
                    response.raise_for_status()
                except httpx.HTTPError:
                    self.failures += 1
                    continue
                self.seconds.append(time.perf_counter() - began)
                self.bytes = len(response.content)

    def close(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        return {
            "scrapes": len(self.seconds),
            "failures": self.failures,
            "median_ms": round(statistics.median(self.seconds) * 1000, 2) if self.seconds else None,
            "bytes": self.bytes,
        }
