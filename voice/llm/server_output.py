"""The embedded LLM server's output, kept in a bounded, rotated log file instead of growing for weeks.

A reader thread per server process copies its lines (stdout and stderr merged) to a
``RotatingFileHandler``: at most ``max_bytes`` per file and ``backups`` older files. The last line stays
in memory too, so a server that fails to start can say why in one line.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import threading
from pathlib import Path
from typing import IO

DEFAULT_MAX_BYTES = 2_000_000
DEFAULT_BACKUPS = 2
_LONGEST_LINE = 8192  # a runaway line is cut, not buffered whole


def default_log_path() -> Path:
    """``$XDG_STATE_HOME/voice/llm-server.log`` (``~/.local/state`` by default), beside the session logs."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "voice" / "llm-server.log"


class ServerOutputLog:
    """One rotated log for every process of one embedded server (restarts append to the same file)."""

    def __init__(
        self, path: Path, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
        self._handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        self._last_line = "no output"
        self._readers: list[threading.Thread] = []

    def follow(self, output: IO[bytes], pid: int) -> None:
        """Copy ``output`` (a process's pipe) to the log until it closes, in a daemon thread."""
        reader = threading.Thread(
            target=self._copy, args=(output, pid), name=f"llm-server-output-{pid}", daemon=True
        )
        self._readers = [thread for thread in self._readers if thread.is_alive()] + [reader]
        reader.start()

    def note(self, message: str) -> None:
        """A line of voice's own about the server (a start, an exit, a restart)."""
        self._write(f"[voice] {message}")

    def _copy(self, output: IO[bytes], pid: int) -> None:
        with output:
            for raw in iter(lambda: output.readline(_LONGEST_LINE), b""):
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self._last_line = line
                    self._write(f"[{pid}] {line}")

    def _write(self, line: str) -> None:
        self._handler.handle(logging.makeLogRecord({"msg": line, "levelno": logging.INFO}))

    def last_line(self) -> str:
        """The server's last output line, the likeliest to say why it failed."""
        return self._last_line[:200]

    def close(self) -> None:
        """After the processes ended: let the readers drain their pipes, then close the file."""
        for reader in self._readers:
            reader.join(timeout=2.0)
        self._handler.close()
