"""A real Prometheus (Debian's ``prometheus`` package) on loopback, scraping one target every second.

Its own config and data folder under the test's tmp path; it is stopped when the block ends.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from voice.testing.loopback import free_port

STARTUP_S = 60.0


class Prometheus:
    """``with Prometheus(folder, "127.0.0.1:8765") as prometheus:`` then ``prometheus.query(promql)``."""

    def __init__(self, folder: Path, target: str, token: str | None = None) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            raise AssertionError("prometheus is not installed (apt-get install prometheus)")
        folder.mkdir(parents=True, exist_ok=True)
        auth = f"    authorization:\n      credentials: {token}\n" if token else ""
        config = folder / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"scrape_configs:\n  - job_name: voice\n    metrics_path: /metrics\n{auth}"
            f"    static_configs:\n      - targets: ['{target}']\n",
            encoding="utf-8",
        )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = (folder / "prometheus.log").open("wb")
        data, listen = folder / "data", f"127.0.0.1:{self.port}"
        self._process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address={listen}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def __enter__(self) -> Prometheus:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise AssertionError(f"prometheus exited ({self._process.returncode})")
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise AssertionError("prometheus did not become ready")

    def __exit__(self, *exc_info: object) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result vector through the HTTP API."""
        answer = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10).json()
        if answer["status"] != "success":
            raise AssertionError(f"{promql}: {answer}")
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result

    def value(self, promql: str) -> float | None:
        """The single value a query returns, or None if it returns nothing."""
        result = self.query(promql)
        return float(result[0]["value"][1]) if result else None

    def wait_for(self, promql: str, wanted: float, seconds: float = 60) -> float:
        """Poll until ``promql`` returns ``wanted`` (scrapes come every second)."""
        deadline = time.monotonic() + seconds
        value = None
        while time.monotonic() < deadline:
            value = self.value(promql)
            if value == wanted:
                return value
            time.sleep(0.5)
        raise AssertionError(f"{promql} stayed {value}, not {wanted}")
