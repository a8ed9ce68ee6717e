"""The durable session log (design §1.7): JSONL, schema-versioned, one event per line, sequence-numbered.

Each line goes to the file in one ``write`` on an append-only descriptor, and the file is fsynced at
every turn boundary, so a crash at any instant loses at most the line being written. Loading
tolerates a torn last line (it is reported, then cut off on resume) and rebuilds the history exactly.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.conversation.events import (
    ConversationEvent,
    TurnEnded,
    TurnFailed,
    TurnStarted,
    event_from_json,
    event_to_json,
)
from voice.errors import SessionLogError

LOG_VERSION = 1


@dataclass(frozen=True)
class LoggedEvent:
    seq: int
    time: str
    event: ConversationEvent


@dataclass(frozen=True)
class LoadedSession:
    """A session log as read back: its events, and what (if anything) was torn off the end."""

    path: Path
    started: str
    events: tuple[LoggedEvent, ...]
    torn_tail: str | None
    intact_bytes: int

    @property
    def next_seq(self) -> int:
        return self.events[-1].seq + 1 if self.events else 1

    def conversation(self, budget: ContextBudget | None = None) -> Conversation:
        return Conversation.from_events((logged.event for logged in self.events), budget)


def load_session(path: str | Path) -> LoadedSession:
    """Read a session log; a bad line anywhere but the last is a SessionLogError naming the line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionLogError(f"cannot read session log {path}: {exc.strerror}") from exc
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty unless the final write was torn
    torn_tail: str | None = tail.decode("utf-8", "replace") if tail else None
    intact = len(data) - len(tail)
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            if number == len(lines) and torn_tail is None:
                # a torn line can also end in a newline written by a later resume; only the last may be torn
                torn_tail, intact = raw.decode("utf-8", "replace"), intact - len(raw) - 1
                break
            raise SessionLogError(f"{path}:{number}: not a JSON object ({exc})") from exc
        records.append(record)
    if not records:
        raise SessionLogError(f"{path}: empty session log (no header line)")
    header = records[0]
    if header.get("type") != "session" or header.get("seq") != 0:
        raise SessionLogError(f"{path}:1: not a voice session log (no session header)")
    if header.get("v") != LOG_VERSION:
        raise SessionLogError(f"{path}: session log version {header.get('v')!r}, expected {LOG_VERSION}")
    events: list[LoggedEvent] = []
    for number, record in enumerate(records[1:], start=2):
        if record.get("seq") != number - 1:
            raise SessionLogError(
                f"{path}:{number}: sequence number {record.get('seq')!r}, expected {number - 1}"
            )
        try:
            events.append(LoggedEvent(number - 1, str(record.get("time", "")), event_from_json(record)))
        except SessionLogError as exc:
            raise SessionLogError(f"{path}:{number}: {exc}") from exc
    return LoadedSession(path, str(header.get("time", "")), tuple(events), torn_tail, intact)


class SessionLog:
    """Appends conversation events to a JSONL file; create a new one or resume an existing one."""

    def __init__(self, fd: int, path: Path, next_seq: int) -> None:
        self._fd = fd
        self.path = path
        self._seq = next_seq
        # fsync waits on the disk (an SD card can take 100s of ms): it runs here, never on the caller's thread
        self._sync_wanted = threading.Event()
        self._closing = False
        self._sync_error: SessionLogError | None = None
        self._syncer = threading.Thread(target=self._sync_when_asked, name="voice-log-sync", daemon=True)
        self._syncer.start()

    @classmethod
    def create(cls, path: str | Path) -> SessionLog:
        path = Path(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except OSError as exc:
            raise SessionLogError(f"cannot create session log {path}: {exc.strerror}") from exc
        log = cls(fd, path, 0)
        log._write({"type": "session", "v": LOG_VERSION})
        log._sync()
        return log

    @classmethod
    def resume(cls, path: str | Path) -> tuple[SessionLog, LoadedSession]:
        """Reopen a log to append to it, cutting off a torn last line first."""
        loaded = load_session(path)
        try:
            fd = os.open(loaded.path, os.O_WRONLY | os.O_APPEND)
            if loaded.torn_tail is not None:
                os.ftruncate(fd, loaded.intact_bytes)
                os.fsync(fd)
        except OSError as exc:
            raise SessionLogError(f"cannot reopen session log {loaded.path}: {exc.strerror}") from exc
        return cls(fd, loaded.path, loaded.next_seq), loaded

    def append(self, event: ConversationEvent) -> None:
        """Write one event; at turn boundaries an fsync follows on the log's own thread.

        The line is in the kernel once this returns, so a crash of the process loses nothing written.
        """
        if self._sync_error is not None:
            raise self._sync_error
        self._write(event_to_json(event))
        if isinstance(event, TurnStarted | TurnEnded | TurnFailed):
            self._sync_wanted.set()

    def _sync_when_asked(self) -> None:
        while True:
            self._sync_wanted.wait()
            self._sync_wanted.clear()
            if self._closing:
                return
            try:
                self._sync()
            except SessionLogError as exc:
                self._sync_error = exc

    def append_all(self, events: list[ConversationEvent]) -> None:
        for event in events:
            self.append(event)

    def _write(self, body: dict[str, Any]) -> None:
        record = {
            "v": LOG_VERSION,
            "seq": self._seq,
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        line = (json.dumps(record | body, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            written = os.write(self._fd, line)
            while written < len(line):  # a short write: finish it rather than leave a torn line
                written += os.write(self._fd, line[written:])
        except OSError as exc:
            raise SessionLogError(f"cannot write session log {self.path}: {exc.strerror}") from exc
        self._seq += 1

    def _sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise SessionLogError(f"cannot sync session log {self.path}: {exc.strerror}") from exc

    def close(self) -> None:
        if self._fd >= 0:
            self._closing = True
            self._sync_wanted.set()
            self._syncer.join()
            self._sync()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_session(path: Path, budget: ContextBudget | None = None) -> tuple[SessionLog, Conversation]:
    """Resume the log at ``path`` (its history continues) or start a new one there."""
    if path.exists():
        log, loaded = SessionLog.resume(path)
        return log, loaded.conversation(budget)
    path.parent.mkdir(parents=True, exist_ok=True)
    return SessionLog.create(path), Conversation(budget)
