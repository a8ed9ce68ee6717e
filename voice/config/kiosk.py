"""What `voice kiosk` can be configured with, owned here so the config reads it without the kiosk."""

from __future__ import annotations

import os
from pathlib import Path

AUDIO_MODES = ("device", "none", "websocket")  # the machine's devices, typed input only, the page's
KEEP = 200  # session logs a kiosk keeps by default; the oldest go first
TOKEN_ENV = "VOICE_TOKEN"  # the token any bind beyond loopback requires (environment only)


def default_folder() -> Path:
    """Where the kiosk's session logs go unless configured: the user's state directory."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "voice" / "kiosk"
