"""The durable session log (docs/architecture.md §1.7): JSONL, versioned, one event per line, numbered.

Each line goes to the file in one ``write`` on an append-only descriptor, on the log's own thread, and
the file is fsynced at every turn boundary, so a crash at any instant loses at most the line being
written and those still queued behind it. The reply's heard progress is logged as it plays, so a turn
a killed process left open is closed on resume with what was heard. Loading tolerates a torn last line
(it is reported, then cut off on resume) and rebuilds the history exactly.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.conversation.log_records import (
    LogRecord,
    TurnEnded,
    TurnFailed,
    TurnLost,
    TurnStarted,
    event_from_json,
    event_to_json,
)
from voice.errors import SessionLogError

LOG_VERSION = 2  # 2 added the reply's heard progress ("heard") and turns closed on resume ("turn_lost")
READABLE_VERSIONS = (1, 2)  # a version 1 log still loads and resumes (its new lines are version 2)


@dataclass(frozen=True)
class LoggedEvent:
    seq: int
    time: str
    event: LogRecord


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
    if header.get("v") not in READABLE_VERSIONS:
        raise SessionLogError(
            f"{path}: session log version {header.get('v')!r}, expected one of {READABLE_VERSIONS}"
        )
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
    """Appends conversation events to a JSONL file; create a new one or resume an existing one.

    Lines are written on the log's own thread, in order, so the caller (the audio loop) never waits on
    the disk; ``flush`` waits until every line appended so far is in the kernel.
    """

    def __init__(self, fd: int, path: Path, next_seq: int) -> None:
        self._fd = fd
        self.path = path
        self._seq = next_seq  # the next line's sequence number
        self._written = next_seq  # lines below this one are in the kernel
        self._lines: queue.SimpleQueue[tuple[int, dict[str, Any], bool] | None] = queue.SimpleQueue()
        self._progress = threading.Condition()
        self._error: SessionLogError | None = None
        self._writer = threading.Thread(target=self._write_queued, name="voice-log-writer", daemon=True)
        self._writer.start()
        # fsync waits on the disk (an SD card can take 100s of ms): it has a thread of its own, so lines
        # keep reaching the kernel while it waits
        self._sync_wanted = threading.Event()
        self._closing = False
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
        log._queue({"type": "session", "v": LOG_VERSION}, sync=False)
        log.flush()
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

    def append(self, event: LogRecord) -> None:
        """Queue one event for the log's thread; at turn boundaries an fsync follows once it is written."""
        if self._error is not None:
            raise self._error
        self._queue(event_to_json(event), isinstance(event, TurnStarted | TurnEnded | TurnFailed | TurnLost))

    def append_all(self, events: list[LogRecord]) -> None:
        for event in events:
            self.append(event)

    def flush(self) -> None:
        """Wait until every line appended so far is in the kernel (a killed process then loses none)."""
        with self._progress:
            self._progress.wait_for(lambda: self._written >= self._seq or self._error is not None)
        if self._error is not None:
            raise self._error

    def _queue(self, body: dict[str, Any], sync: bool) -> None:
        with self._progress:  # numbered in the order queued
            self._lines.put((self._seq, body, sync))
            self._seq += 1

    def _write_queued(self) -> None:
        while (queued := self._lines.get()) is not None:
            seq, body, sync = queued
            if self._error is None:  # after a failed write, later lines would leave a gap: none follow
                try:
                    self._write(seq, body)
                except SessionLogError as exc:
                    self._error = exc
            with self._progress:
                self._written = seq + 1
                self._progress.notify_all()
            if sync:
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
                self._error = exc

    def _write(self, seq: int, body: dict[str, Any]) -> None:
        record = {"v": LOG_VERSION, "seq": seq, "time": datetime.now(UTC).isoformat(timespec="milliseconds")}
        line = (json.dumps(record | body, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            written = os.write(self._fd, line)
            while written < len(line):  # a short write: finish it rather than leave a torn line
                written += os.write(self._fd, line[written:])
        except OSError as exc:
            raise SessionLogError(f"cannot write session log {self.path}: {exc.strerror}") from exc

    def _sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise SessionLogError(f"cannot sync session log {self.path}: {exc.strerror}") from exc

    def close(self) -> None:
        """Write what is queued, sync it to the disk and close the file."""
        if self._fd >= 0:
            self._lines.put(None)
            self._writer.join()
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
    """Resume the log at ``path`` (its history continues) or start a new one there.

    A turn the log left open is closed in it first, as interrupted with what the log shows was heard.
    """
    if path.exists():
        log, loaded = SessionLog.resume(path)
        conversation = loaded.conversation(budget)
        log.append_all(conversation.take_events())
        return log, conversation
    path.parent.mkdir(parents=True, exist_ok=True)
    return SessionLog.create(path), Conversation(budget)
