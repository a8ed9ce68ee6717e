"""The kiosk's session logs: one file per conversation, in one folder, the oldest pruned.

A kiosk talks to a new visitor every few minutes for weeks; each conversation gets its own log, and
only the newest ``keep`` are kept, so the disk does not fill.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from voice.config.kiosk import KEEP
from voice.conversation.session_log import SessionLog
from voice.errors import SessionLogError

PREFIX = "kiosk-"


class SessionFiles:
    """Creates each conversation's log in ``folder`` and prunes all but the newest ``keep``."""

    def __init__(self, folder: Path, keep: int = KEEP) -> None:
        if keep < 1:
            raise SessionLogError("--keep-sessions must keep at least 1")
        self.folder = folder
        self.keep = keep

    def logs(self) -> list[Path]:
        """The kiosk's session logs, oldest first (their names sort by time)."""
        return sorted(self.folder.glob(f"{PREFIX}*.jsonl"))

    def create(self) -> SessionLog:
        """A new, empty log for the next conversation (the oldest beyond ``keep`` are removed)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionLogError(f"cannot create the session folder {self.folder}: {exc.strerror}") from exc
        name = f"{PREFIX}{datetime.now():%Y%m%d-%H%M%S-%f}.jsonl"
        log = SessionLog.create(self.folder / name)
        self.prune()
        return log

    def prune(self) -> None:
        for old in self.logs()[: -self.keep]:
            old.unlink(missing_ok=True)
