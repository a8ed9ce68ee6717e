"""`voice chat --metrics-port N`: /metrics and /healthz on 127.0.0.1, on a thread of their own.

A desktop has no kiosk port to share, so this small server answers only those two paths, and only on
loopback (no token: nothing beyond this machine reaches it).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from voice.errors import ConfigError
from voice.telemetry.health import Health
from voice.telemetry.metrics import CONTENT_TYPE, VoiceMetrics

HOST = "127.0.0.1"


class TelemetryEndpoint:
    """``with TelemetryEndpoint(port, metrics, health):`` serves until the block ends."""

    def __init__(self, port: int, metrics: VoiceMetrics, health: Health) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, metrics.exposition(), CONTENT_TYPE)
                elif path == "/healthz":
                    report = health.report()
                    self._send(report.status_code, report.json(), "application/json")
                else:
                    self._send(404, b"Not found: /metrics and /healthz are here\n", "text/plain")

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a scrape every few seconds is no news

        try:
            self._server = ThreadingHTTPServer((HOST, port), Handler)
        except OSError as exc:
            raise ConfigError(f"cannot serve metrics on {HOST}:{port}: {exc.strerror}") from exc
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="voice-metrics", daemon=True)

    def __enter__(self) -> TelemetryEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
