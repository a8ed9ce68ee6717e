"""A real `voice kiosk` on loopback and Debian's headless chromium driven by Selenium.

Chromium runs as root in CI, so without its sandbox; ``--autoplay-policy`` lets the page's audio
start without a real user's gesture. Every wait is for something the page or the server shows; the
test's own timeout bounds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from voice.testing.loopback import free_port

CHROMIUM = "/usr/bin/chromium"


CHROMEDRIVER = "/usr/bin/chromedriver"


WAIT_S = 240.0  # a condition the page must reach; the test's timeout is the real bound


ROOT = Path(__file__).resolve().parents[2]


class Kiosk:
    """`voice kiosk` as a user starts it, on a free loopback port; restartable on the same port."""

    def __init__(self, workdir: Path, audio: str = "websocket") -> None:
        self.port = free_port()
        self.workdir = workdir
        self.sessions = workdir / "sessions"
        self.audio = audio
        self.output = workdir / "kiosk.out"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def session(self) -> Path:
        """The log of the conversation going on (each start and each new visitor gets a new one)."""
        return sorted(self.sessions.glob("kiosk-*.jsonl"))[-1]

    def start(self) -> None:
        with self.output.open("ab") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "voice", "kiosk", "--port", str(self.port), "--audio", self.audio,
                 "--sessions", str(self.sessions), "--fresh-after", "3600"],
                stdout=output, stderr=subprocess.STDOUT, cwd=ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )  # fmt: skip
        while not self._serving():
            if self.process.poll() is not None:
                raise AssertionError(f"voice kiosk exited {self.process.returncode}: {self.said()}")
            time.sleep(0.2)

    def _serving(self) -> bool:
        try:
            with urllib.request.urlopen(self.url, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)

    def said(self) -> str:
        return self.output.read_text(errors="replace")[-4000:]


class Watcher:
    """A websocket client beside the page, keeping every event the kiosk sends (it only watches)."""

    def __init__(self, socket: ClientConnection) -> None:
        self.events: list[dict[str, Any]] = []
        self._socket = socket
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            for message in self._socket:
                if isinstance(message, str):
                    self.events.append(json.loads(message))

    def of(self, *kinds: str) -> list[dict[str, Any]]:
        return [event for event in list(self.events) if event["type"] in kinds]

    def wait_for(
        self, kind: str | tuple[str, ...], test: Callable[[dict[str, Any]], bool] = bool
    ) -> dict[str, Any]:
        """The first event of ``kind`` (or of any of several kinds) that passes ``test``."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and self._thread.is_alive():
            found = [event for event in self.of(*((kind,) if isinstance(kind, str) else kind)) if test(event)]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no {kind} event came; saw {self.summary()}")

    def summary(self) -> str:
        """What happened, in short: each event's type, and its words where it has some."""
        shown = []
        for event in self.events:
            if event["type"] == "response.heard":
                continue  # many, and the interruption or completion says what they added up to
            words = event.get("text", event.get("heard", event.get("state", "")))
            shown.append(f"{event['type']} {str(words)[:60]!r} t={event.get('t')}")
        return "\n".join(shown[-40:])

    def send(self, command: dict[str, Any]) -> None:
        self._socket.send(json.dumps(command))

    def stop(self) -> None:
        self._socket.close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def watching(kiosk: Kiosk) -> Iterator[Watcher]:
    with connect(f"ws://127.0.0.1:{kiosk.port}/ws", open_timeout=10) as socket:
        watcher = Watcher(socket)
        try:
            yield watcher
        finally:
            watcher.stop()


def chromium(*flags: str) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,800",
        "--autoplay-policy=no-user-gesture-required",
        *flags,
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def speaking_chromium(wav: Path) -> webdriver.Chrome:
    """A chromium whose fake microphone plays ``wav`` once, granted to the page without asking."""
    return chromium(
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}%noloop",
    )


def console_problems(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """What the page wrote to the console as a warning or an error (the log empties as it is read)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] in {"SEVERE", "WARNING"}]


def text_of(driver: webdriver.Chrome, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).text)


def wait_until(driver: webdriver.Chrome, condition: Callable[[webdriver.Chrome], Any]) -> Any:
    return WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(condition)
