"""A loopback HTTP server for pulls: serves given bytes with Range support, and can break off mid-file."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Served:
    """What the server holds and what it was asked.

    ``break_off``: how many of the next file responses stop halfway and drop the connection.
    ``ignore_range``: answer a Range request with the whole file, as servers without range support do.
    ``requests``: (path, Range header or None) of every request, in order.
    """

    files: dict[str, bytes] = field(default_factory=dict)
    break_off: int = 0
    ignore_range: bool = False
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""

    def ranges(self, path: str) -> list[str | None]:
        """The Range header of every request for ``path``."""
        return [header for asked, header in self.requests if asked == path]


@contextmanager
def serving(served: Served) -> Iterator[Served]:
    """Serve ``served`` on 127.0.0.1 (a free port) until the block ends; ``served.url`` is its root."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append((self.path, self.headers.get("Range")))
            body = served.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start = 0
            asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
            if asked is not None and not served.ignore_range:
                start = int(asked[1])
                if start >= len(body):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            rest = body[start:]
            self.send_header("Content-Length", str(len(rest)))
            self.send_header(
                "Content-Type", "text/html" if self.path.endswith("/") else "application/octet-stream"
            )
            self.end_headers()
            if served.break_off > 0 and not self.path.endswith("/"):
                served.break_off -= 1
                self.wfile.write(rest[: len(rest) // 2])
                self.close_connection = True
                return
            self.wfile.write(rest)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
